import { useSearchParams } from 'react-router';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ChangePasswordSection } from './ChangePasswordSection.tsx';
import { FactorsSection } from './FactorsSection.tsx';
import { ProfileSection } from './ProfileSection.tsx';
import { SessionsSection } from './SessionsSection.tsx';

/** Account and security: the person's own profile, password, authenticator apps and sessions. */
export function AccountPage() {
  const [search] = useSearchParams();
  return (
    <>
      <PageHeader title="Account & security" description="Your password, your authenticator apps and where you are signed in." />
      {search.get('welcome') ? <Notice>Welcome! Your account is ready. Consider adding an authenticator app below.</Notice> : null}
      <ProfileSection />
      <FactorsSection />
      <ChangePasswordSection />
      <SessionsSection />
    </>
  );
}
